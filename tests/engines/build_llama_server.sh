#!/usr/bin/env bash
# Builds llama.cpp's C++ `llama-server` (and `llama-quantize`) from the llama.cpp tree that the llama-cpp-python sdist
# vendors (tools/server included), into a cache outside the project's environment.
# Idempotent: a finished build is reused; a second copy started while one builds waits for it
# (flock). Prints the binary's path on its last line; build output goes to stderr.
#   EVALSUITE_ENGINE_CACHE   cache folder (default ~/.cache/evalsuite/engines)
#   LLAMA_CPP_PYTHON_VERSION sdist to take the source from (default 0.3.36: llama.cpp 0.5.0-dev)
#   CMAKE_BUILD_PARALLEL_LEVEL  compile jobs (default 2)
# Measured: ~30 min on 2 busy cores (the server links the multimodal library, so most of
# llama.cpp compiles); the time of the last build is written to $dest/build.time.
set -euo pipefail
version="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
cache="${EVALSUITE_ENGINE_CACHE:-$HOME/.cache/evalsuite/engines}"
dest="$cache/llama-server-$version"
bin="$dest/bin/llama-server"
quantize="$dest/bin/llama-quantize"   # beside it: the real-model tests make their quant ladder with it
mkdir -p "$cache"
exec 9>"$cache/llama-server-$version.lock"
flock 9
if [[ -x "$bin" && -x "$quantize" ]]; then echo "$bin"; exit 0; fi
start=$(date +%s)
work="$(mktemp -d "$cache/build-llama-server.XXXXXX")"
trap 'rm -rf "$work"' EXIT
# Without build isolation pip prepares the sdist's metadata with the backend installed here;
# with isolation it fetches the backend itself, which has failed once on these machines.
python -m pip install -q scikit-build-core >&2
python -m pip download -q --no-binary :all: --no-deps --no-build-isolation -d "$work" "llama-cpp-python==$version" >&2 \
  || python -m pip download -q --no-binary :all: --no-deps -d "$work" "llama-cpp-python==$version" >&2
tar -xzf "$work"/llama_cpp_python-*.tar.gz -C "$work"
src="$(echo "$work"/llama_cpp_python-*/vendor/llama.cpp)"
generator=()
command -v ninja >/dev/null && generator=(-G Ninja)
# LLAMA_USE_PREBUILT_UI=OFF: the web UI would otherwise be downloaded at configure time.
# GGML_NATIVE=OFF: a cached binary must run on any machine of this kind, not only the builder.
cmake -S "$src" -B "$work/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_BUILD_SERVER=ON -DLLAMA_BUILD_TESTS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=ON -DBUILD_SHARED_LIBS=OFF -DGGML_NATIVE=OFF >&2
cmake --build "$work/build" --target llama-server llama-quantize -j "${CMAKE_BUILD_PARALLEL_LEVEL:-2}" >&2
mkdir -p "$dest/bin"
cp "$work/build/bin/llama-quantize" "$quantize.tmp" && mv "$quantize.tmp" "$quantize"
cp "$work/build/bin/llama-server" "$bin.tmp" && mv "$bin.tmp" "$bin"
echo "$(( $(date +%s) - start )) s" > "$dest/build.time"
"$bin" --version >&2 || true
echo "$bin"
