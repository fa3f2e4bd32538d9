# No history kept at all.
HISTSIZE=0
SAVEHIST=0
unset HISTFILE
