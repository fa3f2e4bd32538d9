# Readline in vi mode, with a mode indicator in the prompt.
set -o vi
bind 'set show-mode-in-prompt on'
bind 'set vi-ins-mode-string "+"'
bind 'set vi-cmd-mode-string ":"'
