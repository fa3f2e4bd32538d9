# powerlevel9k (Debian's zsh-theme-powerlevel9k): a theme that builds PROMPT and RPROMPT in
# its precmd hook, with status, dir and vcs segments.
#@needs /usr/share/powerlevel9k/powerlevel9k.zsh-theme
POWERLEVEL9K_MODE=compatible
POWERLEVEL9K_LEFT_PROMPT_ELEMENTS=(status dir vcs)
POWERLEVEL9K_RIGHT_PROMPT_ELEMENTS=(command_execution_time)
source /usr/share/powerlevel9k/powerlevel9k.zsh-theme
