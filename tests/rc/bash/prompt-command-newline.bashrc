# PROMPT_COMMAND as a string ending in a newline (how bash-preexec and many dotfiles join it).
PROMPT_COMMAND=$'history -a\n'
