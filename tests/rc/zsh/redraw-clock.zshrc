# A theme that redraws its prompt: a clock refreshed every second with zle reset-prompt.
PROMPT='%D{%H:%M:%S} %~ %# '
TMOUT=1
TRAPALRM() { zle reset-prompt 2>/dev/null }
