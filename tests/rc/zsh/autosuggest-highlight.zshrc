# zsh-autosuggestions and zsh-syntax-highlighting (Debian's packages): both wrap every
# line-editor widget, and add precmd hooks of their own after the rc.
#@needs /usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh
#@needs /usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh
source /usr/share/zsh-autosuggestions/zsh-autosuggestions.zsh
source /usr/share/zsh-syntax-highlighting/zsh-syntax-highlighting.zsh
