# Options that change how zsh code reads: arrays from 0, word splitting, unset variables
# as errors, comments at the prompt, auto cd, history dropping a leading space and dups.
setopt KSH_ARRAYS SH_WORD_SPLIT NO_UNSET INTERACTIVE_COMMENTS AUTO_CD
setopt HIST_IGNORE_SPACE HIST_IGNORE_ALL_DUPS NO_BEEP PROMPT_SUBST
PS1='%n %~ %# '
