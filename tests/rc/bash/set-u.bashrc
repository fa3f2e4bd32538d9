# `set -u` in the rc: every unset variable an integration touches would print an error.
set -u
PS1='\u@\h:\w\$ '
