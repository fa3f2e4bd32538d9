# Debian's recommended ~/.zshrc for new users (zsh-common's newuser.zshrc.recommended):
# promptinit with a theme, compinit with menu selection, emacs keys, history options.
#@needs /etc/zsh/newuser.zshrc.recommended
source /etc/zsh/newuser.zshrc.recommended
