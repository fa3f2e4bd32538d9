# Prompts without %-escapes (`unsetopt PROMPT_PERCENT`), as sh-emulation set-ups have.
unsetopt PROMPT_PERCENT
PS1='plain$ '
