# `set -e` in the rc: a failing command ends the shell (bash does this at the prompt too),
# and so would any failing status the integration returned.
#@expect false-ends-shell
set -e
PS1='\w\$ '
