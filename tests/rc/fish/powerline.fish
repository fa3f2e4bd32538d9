# powerline (Debian's powerline): fish_prompt defined by an event handler at set-up.
#@needs /usr/share/powerline/bindings/fish/powerline-setup.fish
source /usr/share/powerline/bindings/fish/powerline-setup.fish
powerline-setup
