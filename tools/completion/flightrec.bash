# SPDX-License-Identifier: LGPL-2.1-or-later
# bash completion for flightrec(1): commands, each command's options, the
# values of --format and --type, and .frd dumps (and directories) for DUMP.
# Works with or without the bash-completion package; installed as
# $datadir/bash-completion/completions/flightrec.
# tests/integration/test_docs.py checks it against 'flightrec CMD --help'.

_flightrec_commands="show events folded processes memory stalls export report snapshot status"

# _flightrec_opts CMD - the options of CMD; those ending in '=' take their
# value after '=' only.
_flightrec_opts()
{
	case $1 in
	show)		echo "--json --top --help --version" ;;
	events)		echo "--json --type --pid= --cgroup= --from= --to= --help --version" ;;
	folded)		echo "--offcpu --python --pid --pid= --cgroup= --from= --to= --help --version" ;;
	processes)	echo "--json --pid= --cgroup= --help --version" ;;
	memory)		echo "--json --top= --help --version" ;;
	stalls)		echo "--json --top= --kind= --pid= --cgroup= --from= --to= --help --version" ;;
	export)		echo "--format -f -o --output --pid= --cgroup= --from= --to= --help --version" ;;
	report)		echo "-o --output --pid= --cgroup= --from= --to= --help --version" ;;
	snapshot)	echo "--reason --socket --timeout --help --version" ;;
	status)		echo "--json --socket --help --version" ;;
	esac
}

# _flightrec_takes_arg CMD OPT - true when OPT of CMD takes the next word
# as its value (so that word is not a DUMP).
_flightrec_takes_arg()
{
	case $2 in
	--top|--type|--format|-f|-o|--output|--reason|--socket|--timeout|--from|--to)
		return 0 ;;
	--pid)	# optional in folded (only --pid=PID), required elsewhere
		[[ $1 != folded ]] ;;
	*)	return 1 ;;
	esac
}

# _flightrec_files [GLOB] - files matching GLOB (all files without one) and
# directories, completed as file names.
_flightrec_files()
{
	local IFS=$'\n' f
	compopt -o filenames 2>/dev/null
	if [[ -n $1 ]]; then
		COMPREPLY+=($(compgen -f -X "!$1" -- "$cur"))
		for f in $(compgen -d -- "$cur"); do
			COMPREPLY+=("$f")
		done
	else
		COMPREPLY+=($(compgen -f -- "$cur"))
	fi
}

_flightrec()
{
	local cur prev opt cmd i words cword
	COMPREPLY=()
	words=("${COMP_WORDS[@]}")
	cword=$COMP_CWORD
	cur=${words[cword]}
	prev=${words[cword-1]}

	# "--opt=value": readline splits it at '=' (COMP_WORDBREAKS), or not.
	opt=
	if [[ $cur == = && $prev == -* ]]; then
		opt=$prev
		cur=
	elif [[ $prev == = && $cword -ge 2 && ${words[cword-2]} == -* ]]; then
		opt=${words[cword-2]}
	elif [[ $cur == --*=* ]]; then
		opt=${cur%%=*}
		cur=${cur#*=}
	fi

	if [[ $cword -le 1 ]]; then
		if [[ $cur == -* ]]; then
			COMPREPLY=($(compgen -W "--help --version" -- "$cur"))
		else
			COMPREPLY=($(compgen -W "$_flightrec_commands help" -- "$cur"))
		fi
		return 0
	fi
	cmd=${words[1]}

	# The value of an option given as --opt=VALUE.
	if [[ -n $opt ]]; then
		case $opt in
		--format)	COMPREPLY=($(compgen -W "chrome pprof folded" -- "$cur")) ;;
		--type)		COMPREPLY=($(compgen -W "sample exit fork exec oom pressure rss oom_score_adj memory memcg stall offcpu stallsum" -- "$cur")) ;;
		--kind)		COMPREPLY=($(compgen -W "reclaim memcg compaction throttle blocked sleep" -- "$cur")) ;;
		--output|--socket)	_flightrec_files ;;
		esac
		return 0
	fi

	# The value of an option given as the next word.
	if [[ $prev == -* ]] && _flightrec_takes_arg "$cmd" "$prev"; then
		case $prev in
		--format|-f)	COMPREPLY=($(compgen -W "chrome pprof folded" -- "$cur")) ;;
		--type)		COMPREPLY=($(compgen -W "sample exit fork exec oom pressure rss oom_score_adj memory memcg stall offcpu stallsum" -- "$cur")) ;;
		-o|--output|--socket)	_flightrec_files ;;
		esac
		return 0
	fi

	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$(_flightrec_opts "$cmd")" -- "$cur"))
		if [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]]; then
			compopt -o nospace 2>/dev/null
		fi
		return 0
	fi

	case $cmd in
	show|events|folded|processes|memory|stalls|export|report)
		# One DUMP: offer it until a word that is not an option (or an
		# option's value) is there.
		for ((i = 2; i < cword; i++)); do
			if [[ ${words[i]} != -* ]]; then
				return 0
			elif [[ ${words[i+1]} == = ]]; then
				((i += 2))	# --opt = value, split by readline
			elif _flightrec_takes_arg "$cmd" "${words[i]}"; then
				((i++))
			fi
		done
		_flightrec_files '*.frd'
		;;
	esac
	return 0
}

complete -F _flightrec flightrec
