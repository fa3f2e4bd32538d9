//! The words inline programs may use: what is known to be harmless, the modules guarded
//! member by member, the calls that run commands.

/// Keywords, builtins, modules and methods of the interpreted languages that read, compute
/// and print, and nothing else: no process, file writing, loading of code or reflection.
#[rustfmt::skip]
pub const KNOWN: &[&str] = &[
    // Python
    "and", "as", "assert", "async", "await", "break", "class", "continue", "def", "del", "elif",
    "else", "except", "finally", "for", "from", "global", "if", "import", "in", "is", "lambda",
    "nonlocal", "not", "or", "pass", "raise", "return", "try", "while", "with", "yield", "True",
    "False", "None", "print", "abs", "all", "any", "ascii", "bin", "bool", "bytes", "bytearray",
    "callable", "chr", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter", "len", "list",
    "map", "max", "min", "next", "object", "oct", "ord", "pow", "range", "repr", "reversed",
    "round", "set", "slice", "sorted", "str", "sum", "tuple", "type", "zip", "input", "Exception",
    "ValueError", "KeyError", "TypeError", "IndexError", "StopIteration", "sys", "json", "math",
    "re", "datetime", "time", "random", "string", "collections", "itertools", "functools",
    "statistics", "decimal", "fractions", "textwrap", "pprint", "base64", "hashlib", "uuid",
    "struct", "unicodedata", "calendar", "operator", "typing", "dataclasses", "enum", "csv", "html",
    "zlib", "binascii", "bisect", "heapq", "copy", "getpass", "version", "version_info", "argv", "stdin",
    "stdout", "stderr", "read", "readline", "readlines", "write", "flush", "maxsize", "byteorder",
    "loads", "load", "dumps", "dump", "indent", "split", "rsplit", "strip", "lstrip", "rstrip",
    "join", "replace", "lower", "upper", "title", "capitalize", "startswith", "endswith", "find",
    "rfind", "index", "count", "encode", "decode", "splitlines", "isdigit", "isalpha", "isalnum",
    "isspace", "zfill", "ljust", "rjust", "center", "partition", "rpartition", "casefold", "append",
    "extend", "insert", "pop", "remove", "sort", "reverse", "clear", "keys", "values", "items",
    "get", "update", "setdefault", "add", "discard", "union", "intersection", "difference", "sqrt",
    "floor", "ceil", "pi", "e", "log", "log2", "log10", "exp", "sin", "cos", "tan", "fabs", "inf",
    "nan", "isnan", "factorial", "gcd", "now", "today", "utcnow", "date", "timedelta", "strftime",
    "strptime", "isoformat", "fromisoformat", "timestamp", "fromtimestamp", "year", "month", "day",
    "hour", "minute", "second", "weekday", "timezone", "utc", "monotonic", "perf_counter",
    "localtime", "gmtime", "randint", "choice", "shuffle", "sample", "uniform", "seed", "match",
    "search", "findall", "finditer", "sub", "fullmatch", "group", "groups", "groupdict", "escape",
    "IGNORECASE", "MULTILINE", "DOTALL", "Counter", "defaultdict", "OrderedDict", "namedtuple",
    "deque", "most_common", "chain", "product", "permutations", "combinations", "groupby", "islice",
    "accumulate", "reduce", "partial", "md5", "sha1", "sha256", "sha512", "hexdigest", "digest",
    "b64encode", "b64decode", "urlsafe_b64encode", "urlsafe_b64decode", "uuid4", "mean", "median",
    "stdev", "mode", "ascii_letters", "digits", "ascii_lowercase", "ascii_uppercase", "punctuation",
    "pack", "unpack", "calcsize", "dedent", "fill", "wrap", "pformat", "Decimal", "exit", "quit",
    "sep", "end",
    // JavaScript (node, deno, bun)
    "var", "let", "const", "function", "new", "typeof", "instanceof", "of", "true", "false", "null",
    "undefined", "catch", "throw", "switch", "case", "default", "do", "console", "error", "warn",
    "info", "debug", "table", "JSON", "parse", "stringify", "Math", "Date", "Number", "String",
    "Boolean", "Array", "Object", "entries", "assign", "fromEntries", "isArray", "from", "parseInt",
    "parseFloat", "isNaN", "Infinity", "NaN", "Map", "Set", "RegExp", "Error", "BigInt", "Buffer",
    "TextEncoder", "TextDecoder", "encodeURIComponent", "decodeURIComponent", "process", "versions",
    "platform", "arch", "env", "pid", "cwd", "uptime", "memoryUsage", "hrtime", "length", "push",
    "shift", "unshift", "slice", "splice", "forEach", "findIndex", "includes", "indexOf", "trim",
    "trimStart", "trimEnd", "toUpperCase", "toLowerCase", "replaceAll", "startsWith", "endsWith",
    "padStart", "padEnd", "repeat", "toString", "toFixed", "toISOString", "getTime", "getFullYear",
    "concat", "flat", "flatMap", "some", "every", "at", "charAt", "charCodeAt", "fromCharCode",
    "codePointAt", "matchAll", "test", "require",
    // Ruby
    "puts", "p", "pp", "each", "select", "reject", "inject", "uniq", "first", "last", "size",
    "chomp", "upcase", "downcase", "to_s", "to_i", "to_f", "to_a", "to_h", "times", "upto",
    "downto", "step", "each_with_index", "with_index", "gsub", "unless", "until", "nil", "begin",
    "rescue", "ensure", "then", "when", "Time", "ENV", "ARGV", "STDIN", "STDOUT", "gets", "Integer",
    "Float", "Hash", "rand", "sprintf", "printf", "chars", "bytes", "lines", "flatten", "compact",
    "tally", "group_by", "each_slice", "each_char", "inspect", "to_json", "pretty_generate",
    "generate", "RUBY_VERSION", "RUBY_PLATFORM",
    // Perl
    "say", "my", "our", "local", "foreach", "elsif", "chop", "lc", "uc", "lcfirst", "ucfirst",
    "exists", "defined", "scalar", "grep", "substr", "rindex", "localtime", "last", "die", "eq",
    "ne", "lt", "gt", "le", "ge", "cmp", "x", "use", "strict", "warnings", "BEGIN", "END",
    // PHP
    "echo", "strlen", "str_replace", "explode", "implode", "json_encode", "json_decode", "var_dump",
    "print_r", "PHP_EOL", "PHP_VERSION", "phpversion", "strtoupper", "strtolower", "intval",
    "floatval", "in_array", "array", "array_map", "array_filter", "array_keys", "array_values",
    // Lua
    "tostring", "tonumber", "pairs", "ipairs", "rep", "huge", "io", "elseif",
    // R
    "cat", "paste", "paste0", "c", "seq", "TRUE", "FALSE", "NULL", "NA", "nchar", "toupper",
    "tolower", "rev", "unique", "head", "tail",
];

/// Modules a program may load by name (`require("path")`, `require 'json'`): the rest
/// (`child_process`, `fs`) is not known to be harmless.
#[rustfmt::skip]
pub const KNOWN_MODULES: &[&str] = &[
    "path", "util", "url", "querystring", "assert", "events", "string_decoder", "buffer", "json",
    "child_process",
    "set", "date", "time", "pp", "digest", "base64", "securerandom", "strict", "warnings",
];

/// Modules that run processes and change files, with the members a program may use of
/// them: the rest (`os.remove`, `os.replace`, `subprocess.Popen`) is not known to be
/// harmless. Their calls that run a command ([`RUNS`]) pass with literal arguments, which
/// are judged as the commands they are.
#[rustfmt::skip]
pub const GUARDED: &[(&str, &[&str])] = &[
    ("os", &[
        "getcwd", "path", "environ", "getenv", "getpid", "getppid", "cpu_count", "sep", "linesep",
        "name", "uname", "getuid", "getlogin", "listdir", "stat", "walk", "scandir", "fork",
    ]),
    ("subprocess", &["PIPE", "DEVNULL", "STDOUT", "CalledProcessError"]),
];

/// Calls that run a command line or an argv: they pass when every argument is a literal
/// (the command is then judged), as a member (`os.system`, `cp.execSync`) or as Perl's,
/// Ruby's and PHP's `system`.
#[rustfmt::skip]
pub const RUNS: &[&str] = &[
    "system", "popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput",
    "execSync", "spawnSync", "execFileSync", "exec", "spawn", "execFile",
];
