# interactive-terminal-mcp: zsh reads the user's own .zshenv, then comes back for our .zshrc.
__pmt_zdotdir=$ZDOTDIR
ZDOTDIR=${PM_TERM_USER_ZDOTDIR:-$HOME}
[[ -f $ZDOTDIR/.zshenv ]] && builtin source $ZDOTDIR/.zshenv
PM_TERM_USER_ZDOTDIR=$ZDOTDIR
ZDOTDIR=$__pmt_zdotdir
unset __pmt_zdotdir
