# `cd` wrapped by a function (as pyenv/nvm/rvm set-ups do), plus direnv's real hook
# (`eval "$(direnv hook bash)"`, Debian's direnv), which keeps $? and joins with `;`.
#@needs /usr/bin/direnv
__after_cd() { __dirs=$(( ${__dirs:-0} + 1 )); }
cd() {
  builtin cd "$@" || return
  __after_cd
}
eval "$(direnv hook bash)"
