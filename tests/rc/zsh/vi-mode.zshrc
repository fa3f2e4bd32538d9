# vi key bindings with a mode indicator: PROMPT changed from a zle widget at every key map
# switch, and the prompt redrawn.
bindkey -v
__mode='I'
zle-keymap-select() { [[ $KEYMAP == vicmd ]] && __mode='N' || __mode='I'; zle reset-prompt }
zle-line-init() { __mode='I' }
zle -N zle-keymap-select
zle -N zle-line-init
setopt PROMPT_SUBST
PROMPT='[${__mode}] %~ %# '
