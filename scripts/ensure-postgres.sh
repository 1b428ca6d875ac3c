#!/bin/sh
# ensure-postgres.sh makes PostgreSQL's server binaries (initdb, pg_ctl,
# pg_basebackup, postgres) available for the SQL instance tests. It does
# nothing when they are already in PATH or under /usr/lib/postgresql/*/bin;
# otherwise it installs Debian's postgresql package. It fails loudly when
# that is impossible, so the tests never run without PostgreSQL.
set -eu

have_postgres() {
	for d in $(dirname "$(command -v pg_ctl 2>/dev/null || echo /nonexistent/pg_ctl)") /usr/lib/postgresql/*/bin; do
		if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/pg_basebackup" ] && [ -x "$d/postgres" ]; then
			echo "PostgreSQL binaries found in $d"
			return 0
		fi
	done
	return 1
}

if have_postgres; then
	exit 0
fi

. "$(dirname "$0")/apt-install.sh"
apt_install ensure-postgres "PostgreSQL server binaries" postgresql

if ! have_postgres; then
	echo "ensure-postgres: postgresql was installed but its server binaries were not found" >&2
	exit 1
fi
