#!/usr/bin/env bash
# Installs `transformers serve` (transformers[serving] with a CPU torch) into its own virtual
# environment in a cache outside the project's environment. Idempotent ($venv/.complete marks a
# finished install); a second copy waits for a running one (flock). Prints the python.
# The same environment runs tests/tiny_hf.py, which writes the tiny HF model the vLLM and
# transformers tests serve.
#   EVALSUITE_ENGINE_CACHE (default ~/.cache/evalsuite/engines), TRANSFORMERS_VERSION (latest),
#   TORCH_VERSION (2.13.0+cpu: PyPI's default torch wheel is the CUDA one, gigabytes)
# Start it:  $venv/bin/transformers serve --host 127.0.0.1 --port 8000 --force-model DIR
set -euo pipefail
spec="transformers[serving]${TRANSFORMERS_VERSION:+==$TRANSFORMERS_VERSION}"
cache="${EVALSUITE_ENGINE_CACHE:-$HOME/.cache/evalsuite/engines}"
venv="$cache/transformers-serve"
py="$venv/bin/python"
mkdir -p "$cache"
exec 9>"$cache/transformers-serve.lock"
flock 9
if [[ -f "$venv/.complete" ]]; then echo "$py"; exit 0; fi
start=$(date +%s)
rm -rf "$venv"
python -m venv "$venv"
"$py" -m pip install -q --upgrade pip >&2
"$py" -m pip install -q "torch==${TORCH_VERSION:-2.13.0+cpu}" >&2
"$py" -m pip install -q "$spec" "torch==${TORCH_VERSION:-2.13.0+cpu}" >&2
"$py" -m pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
"$py" -c "import transformers, torch; print('transformers', transformers.__version__, 'torch', torch.__version__, 'cuda', torch.version.cuda)" >&2
echo "$(( $(date +%s) - start )) s" > "$venv/install.time"
touch "$venv/.complete"
echo "$py"
