# git's own prompt (Debian's git: git-sh-prompt) from zsh, in its precmd mode, which
# rewrites PS1 at every prompt.
#@needs /usr/lib/git-core/git-sh-prompt
source /usr/lib/git-core/git-sh-prompt
GIT_PS1_SHOWDIRTYSTATE=1
precmd() { __git_ps1 "%n@%m:%~" "%# " " (%s)" }
