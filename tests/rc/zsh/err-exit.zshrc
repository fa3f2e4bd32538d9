# ERR_EXIT in the rc: a failing command ends the shell.
#@expect false-ends-shell
setopt ERR_EXIT
PS1='%~ %# '
