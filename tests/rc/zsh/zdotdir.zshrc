# The XDG layout: ~/.zshenv moves ZDOTDIR to ~/.config/zsh, where the real .zshrc lives
# (this file is only a decoy that must not be read).
print -u2 'the decoy ~/.zshrc was read'
#@file .zshenv
ZDOTDIR=$HOME/.config/zsh
#@end
#@file .config/zsh/.zshrc
PS1='xdg %~ %# '
__xdg_loaded=1
precmd() { : }
#@end
