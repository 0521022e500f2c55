"""A run: what it is asked to do (settings.py), its items, jobs and requests (items.py), the run
around the requests (runner.py: preflight, resume, finishing), the workers, retries and the
watchdog (scheduler.py), grading off the event loop (grading.py), the record of each job
(records.py), the manifest and the run folder it resumes (manifest.py, resume.py), and the
progress display (progress.py)."""
