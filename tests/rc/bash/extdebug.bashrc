# extdebug and functrace, with a DEBUG trap that is inherited by functions.
shopt -s extdebug
set -o functrace
trap ': "${BASH_COMMAND}"' DEBUG
