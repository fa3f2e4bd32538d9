# History that keeps nothing at all (some privacy set-ups).
HISTIGNORE='*'
