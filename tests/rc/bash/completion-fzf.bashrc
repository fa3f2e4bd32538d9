# bash-completion and fzf (Debian's bash-completion and fzf), as most distributions' defaults
# and dotfiles load them: programmable completion for everything, fzf's completion, and its
# key bindings where the package's examples are installed.
#@needs /usr/share/bash-completion/bash_completion
#@needs /usr/share/bash-completion/completions/fzf
. /usr/share/bash-completion/bash_completion
. /usr/share/bash-completion/completions/fzf
if [ -r /usr/share/doc/fzf/examples/key-bindings.bash ]; then
  . /usr/share/doc/fzf/examples/key-bindings.bash
fi
