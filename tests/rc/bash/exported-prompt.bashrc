# Old dotfiles export their prompt variables, so every program (and every nested shell)
# inherits them; the integration's marks (and its nonce) must not travel with them.
export PS1='\u@\h:\w\$ '
export PROMPT_COMMAND='history -a'
export PS0=''
