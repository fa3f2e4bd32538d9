# Debian's default ~/.bashrc for a new account (/etc/skel/.bashrc), colour prompt on:
# HISTCONTROL=ignoreboth, checkwinsize, a title set from PS1, dircolors, bash-completion.
#@needs /etc/skel/.bashrc
force_color_prompt=yes
. /etc/skel/.bashrc
