# powerline (Debian's powerline): PS1 rendered by an outside program at every prompt.
#@needs /usr/share/powerline/bindings/bash/powerline.sh
POWERLINE_BASH_CONTINUATION=1
POWERLINE_BASH_SELECT=1
. /usr/share/powerline/bindings/bash/powerline.sh
