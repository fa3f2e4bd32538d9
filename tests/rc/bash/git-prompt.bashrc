# git's own prompt (Debian's git: git-sh-prompt) in PROMPT_COMMAND mode, where __git_ps1
# rewrites PS1 at every prompt, in a repository with a dirty state shown.
#@needs /usr/lib/git-core/git-sh-prompt
. /usr/lib/git-core/git-sh-prompt
GIT_PS1_SHOWDIRTYSTATE=1
GIT_PS1_SHOWUNTRACKEDFILES=1
GIT_PS1_SHOWCOLORHINTS=1
PROMPT_COMMAND='__git_ps1 "\u@\h:\w" "\\\$ "'
