# powerline (Debian's powerline): PROMPT rendered by an outside program.
#@needs /usr/share/powerline/bindings/zsh/powerline.zsh
source /usr/share/powerline/bindings/zsh/powerline.zsh
