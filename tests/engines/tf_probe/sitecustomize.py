"""Imported at start-up by a `transformers serve` whose PYTHONPATH holds this folder (the
prompt-lookup test in test_transformers_serve.py). transformers shows nowhere whether prompt
lookup drafted anything (no /metrics, nothing in the response or the log), so this counts it
where it happens: each verification step of assisted generation appends "DRAFTED ACCEPTED" (the
tokens PromptLookupCandidateGenerator proposed, the ones the model kept) to the file named by
EVALSUITE_TF_PROBE. It wraps, and changes nothing the server computes."""
import os

_PATH = os.environ.get("EVALSUITE_TF_PROBE")

if _PATH:
    from transformers.generation import candidate_generator as _candidates

    _lookup = _candidates.PromptLookupCandidateGenerator
    _get, _update = _lookup.get_candidates, _lookup.update_candidate_strategy

    def _get_candidates(self, input_ids, *args, **kwargs):
        candidate_ids, logits = _get(self, input_ids, *args, **kwargs)
        self._evalsuite_drafted = int(candidate_ids.shape[-1] - input_ids.shape[-1])
        return candidate_ids, logits

    def _update_candidate_strategy(self, input_ids, scores, num_matches):
        with open(_PATH, "a", encoding="utf-8") as f:
            f.write(f"{getattr(self, '_evalsuite_drafted', 0)} {int(num_matches)}\n")
        return _update(self, input_ids, scores, num_matches)

    _lookup.get_candidates, _lookup.update_candidate_strategy = _get_candidates, _update_candidate_strategy
