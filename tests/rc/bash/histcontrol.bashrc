# History that leaves lines out: a leading space, and erased duplicates.
HISTCONTROL=ignorespace:erasedups
HISTSIZE=5000
shopt -s histappend
