"""SVG answers beyond grading (graders/svg.py grades them): drawing each one to a PNG in a
bounded worker process (render.py, `evalsuite svg-render`) and the rubric judge that scores the
drawings (judge.py, `svg-render --judge-endpoint`)."""
