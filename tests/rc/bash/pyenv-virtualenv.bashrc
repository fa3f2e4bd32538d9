# Reproduction of `eval "$(pyenv virtualenv-init -)"` (pyenv-virtualenv 1.2): its hook keeps
# `$?` and is put first in PROMPT_COMMAND with a trailing `;`. `pyenv` is a stub here.
pyenv() { return 0; }
export PYENV_VIRTUALENV_INIT=1;
_pyenv_virtualenv_hook() {
  local ret=$?
  if [ -n "${VIRTUAL_ENV-}" ]; then
    eval "$(pyenv sh-activate --quiet || pyenv sh-deactivate --quiet || true)" || true
  else
    eval "$(pyenv sh-activate --quiet || true)" || true
  fi
  _PYENV_VH_PWD="${PWD}"
  return $ret
};
if ! [[ "${PROMPT_COMMAND-}" =~ _pyenv_virtualenv_hook ]]; then
  PROMPT_COMMAND="_pyenv_virtualenv_hook;${PROMPT_COMMAND-}"
fi
