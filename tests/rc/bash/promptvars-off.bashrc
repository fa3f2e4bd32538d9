# Prompt strings taken literally (`shopt -u promptvars`): no expansion in PS0 or PS1.
shopt -u promptvars
PS1='plain$ '
