# fish as the interactive shell where the login shell cannot be changed: the Arch Wiki's
# snippet ("Modify .bashrc to drop into fish"), after Debian's skeleton. bash reads this and
# replaces itself with fish, which reads ~/.config/fish/config.fish. (The wiki's snippet also
# asks for SHLVL 1, which depends on how the tests are started; left out.)
#@becomes fish
#@needs /etc/skel/.bashrc
#@file .config/fish/config.fish
set -g fish_greeting
set -gx EDITOR vim
function fish_prompt
    printf '%s@%s %s> ' $USER (prompt_hostname) (prompt_pwd)
end
#@end
. /etc/skel/.bashrc
if [[ $(ps --no-header --pid=$PPID --format=comm) != "fish" && -z ${BASH_EXECUTION_STRING} ]]
then
	shopt -q login_shell && LOGIN_OPTION='--login' || LOGIN_OPTION=''
	exec fish $LOGIN_OPTION
fi
