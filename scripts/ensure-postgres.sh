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

if ! command -v apt-get >/dev/null 2>&1; then
	echo "ensure-postgres: PostgreSQL server binaries not found and apt-get is not available; install PostgreSQL (initdb, pg_ctl, pg_basebackup, postgres)" >&2
	exit 1
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO="sudo"
	else
		echo "ensure-postgres: PostgreSQL server binaries not found; run as root or install Debian's postgresql package" >&2
		exit 1
	fi
fi

echo "ensure-postgres: installing Debian's postgresql package"
$SUDO apt-get update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends postgresql

if ! have_postgres; then
	echo "ensure-postgres: postgresql was installed but its server binaries were not found" >&2
	exit 1
fi
