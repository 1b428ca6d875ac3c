#!/usr/bin/env python3
"""Starts Patroni as Spilo does, from the variables Zalando's postgres-operator sets.

Spilo (github.com/zalando/spilo) turns a pod's environment into a Patroni
configuration (scripts/configure_spilo.py) and runs Patroni (launch.sh). The
operator sets no command, so the image must do the same. This image has
Debian's Patroni 3.0.2 and PostgreSQL 15 and none of Spilo's extras (WAL-E
and WAL-G backups, bg_mon, pgbouncer, PAM, cron); this script keeps what the
operator and the course rely on:

- /home/postgres/postgres.yml, the file `patronictl -c` reads;
- Patroni's Kubernetes DCS with use_endpoints (the operator's primary
  Service has no selector: Patroni writes its Endpoints) and the labels the
  operator selects on: spilo-role=master|replica, cluster-name=<SCOPE>;
- the superuser and replication users from PGUSER_* and PGPASSWORD_*;
- SSL on (the operator connects with sslmode=require), the REST API on
  :8008 (the readiness probe asks /readiness), the data under $PGROOT;
- the roles Spilo's post_init.sh makes at bootstrap: the operator creates
  its users IN ROLE admin;
- SPILO_CONFIGURATION merged over these defaults, the operator's winning.

Usage: entrypoint.py [configure]   (configure: write the file, do not start)
       entrypoint.py post-init HUMAN_ROLE URL   (Patroni's bootstrap.post_init)
"""
import json
import os
import pwd
import re
import shlex
import socket
import subprocess
import sys

import yaml

PGHOME = '/home/postgres'
CONFIG = PGHOME + '/postgres.yml'
CERTS = '/run/certs'
LIB = '/usr/lib/postgresql'


def fail(message):
    sys.exit('spilo entrypoint: ' + message)


def merge(user, ours):
    """Spilo's deep_update: dicts merge key by key; anywhere else (lists too) the user's value wins."""
    if isinstance(user, dict) and isinstance(ours, dict):
        for key, value in ours.items():
            user[key] = merge(user[key], value) if key in user else value
        return user
    return ours if user is None else user


def memory_mb():
    """The container's memory limit (cgroup v2 or v1), or the machine's memory, in MB."""
    limit = os.sysconf('SC_PAGE_SIZE') * os.sysconf('SC_PHYS_PAGES')
    for path in ('/sys/fs/cgroup/memory.max', '/sys/fs/cgroup/memory/memory.limit_in_bytes'):
        try:
            with open(path) as f:
                limit = min(limit, int(f.read()))
        except (OSError, ValueError):  # no such file, or "max"
            pass
    return limit >> 20


def dcs(env, ip):
    """Patroni's DCS: Kubernetes when the operator asks for it (DCS_ENABLE_KUBERNETES_API) in a pod, else etcd."""
    if env.get('DCS_ENABLE_KUBERNETES_API') and env.get('KUBERNETES_SERVICE_HOST'):
        try:
            labels = json.loads(env.get('KUBERNETES_LABELS') or '{"application": "spilo"}')
        except ValueError as e:
            fail('KUBERNETES_LABELS is not JSON: %s' % e)
        k8s = {'namespace': env.get('POD_NAMESPACE') or 'default', 'labels': labels,
               'scope_label': env.get('KUBERNETES_SCOPE_LABEL', 'version'),
               'role_label': env.get('KUBERNETES_ROLE_LABEL', 'spilo-role'),
               'bypass_api_service': env.get('KUBERNETES_BYPASS_API_SERVICE', 'true').lower() == 'true'}
        if not env.get('KUBERNETES_USE_CONFIGMAPS'):  # Patroni's default is ConfigMaps
            k8s.update(use_endpoints=True, pod_ip=ip, ports=[{'port': 5432, 'name': 'postgresql'}])
        return {'kubernetes': k8s}
    for name in ('etcd3', 'etcd'):  # ETCD3_HOST, then ETCD_HOST, as in Spilo
        if env.get(name.upper() + '_HOST'):
            return {name: {'host': env[name.upper() + '_HOST']}}
    fail('no DCS: run in a pod with DCS_ENABLE_KUBERNETES_API=true (as the operator sets it), or set ETCD3_HOST')


def pg_hba(standby, allow_nossl):
    """Spilo's rules without PAM: passwords over SSL from anywhere, trust on the local socket."""
    rules = ['local all all trust', 'host all all 127.0.0.1/32 md5', 'host all all ::1/128 md5',
             'local replication %s trust' % standby, 'hostssl replication %s all md5' % standby]
    if allow_nossl:
        return rules + ['host all all all md5']
    return rules + ['hostnossl all all all reject', 'hostssl all all all md5']


def configuration(env):
    """Spilo's template, reduced to what Debian's packages have, with SPILO_CONFIGURATION over it."""
    ip = env.get('POD_IP') or socket.gethostbyname(socket.gethostname())
    pgroot = env.get('PGROOT', PGHOME + '/pgroot')
    mem = memory_mb()
    standby = env.get('PGUSER_STANDBY', 'standby')
    ours = {
        'scope': env.get('SCOPE', 'dummy'),
        'name': socket.gethostname(),  # the pod's name
        'restapi': {'listen': '*:8008', 'connect_address': ip + ':8008'},  # Spilo's ':8008', in the form Patroni validates
        'bootstrap': {
            'dcs': {'ttl': 30, 'loop_wait': 10, 'retry_timeout': 10, 'maximum_lag_on_failover': 33554432,
                    'postgresql': {'use_pg_rewind': True, 'use_slots': True, 'parameters': {
                        'wal_level': 'hot_standby', 'wal_log_hints': 'on', 'hot_standby': 'on',
                        'max_wal_senders': 10, 'max_replication_slots': 10,
                        'max_connections': min(max(100, mem // 30), 1000),  # 1 per 30 MB, as Spilo
                        'log_line_prefix': '%t [%p]: [%l-1] %c %x %d %u %a %h '}}},
            'initdb': [{'encoding': 'UTF8'}, {'locale': 'en_US.UTF-8'}, 'data-checksums'],
            'post_init': '/usr/bin/python3 /scripts/entrypoint.py post-init ' + shlex.quote(env.get('HUMAN_ROLE', 'zalandos')),
        },
        'postgresql': {
            'listen': '*:5432', 'connect_address': ip + ':5432',
            'data_dir': env.get('PGDATA') or pgroot + '/data',
            'pgpass': '/run/postgresql/pgpass', 'use_unix_socket': True, 'use_unix_socket_repl': True,
            'authentication': {
                'superuser': {'username': env.get('PGUSER_SUPERUSER', 'postgres'),
                              'password': env.get('PGPASSWORD_SUPERUSER', 'zalando')},
                'replication': {'username': standby, 'password': env.get('PGPASSWORD_STANDBY', 'standby')},
            },
            'parameters': {'shared_buffers': '%dMB' % (mem // 5),  # a fifth of the limit, as Spilo on Kubernetes
                           'ssl': 'on', 'ssl_cert_file': CERTS + '/server.crt', 'ssl_key_file': CERTS + '/server.key',
                           'shared_preload_libraries': 'pg_stat_statements'},
            'pg_hba': pg_hba(standby, env.get('ALLOW_NOSSL')),
        },
    }
    ours.update(dcs(env, ip))
    user = yaml.safe_load(env.get('SPILO_CONFIGURATION') or env.get('PATRONI_CONFIGURATION') or '') or {}
    if not isinstance(user, dict):
        fail('SPILO_CONFIGURATION is not a mapping')
    config = merge(user, ours)
    config['postgresql']['bin_dir'] = bin_dir(config['postgresql'], env)
    return config


def bin_dir(pg, env):
    """PostgreSQL's programs, chosen as Spilo does: the data's own version, the operator's bin_dir
    (/usr/lib/postgresql/<spec.postgresql.version>/bin), PGVERSION, else the version installed."""
    have = sorted(os.listdir(LIB), key=float)
    want = pg.get('bin_dir') or (env.get('PGVERSION') and '%s/%s/bin' % (LIB, env['PGVERSION']))
    try:
        with open(os.path.join(pg['data_dir'], 'PG_VERSION')) as f:
            want = '%s/%s/bin' % (LIB, f.read().strip())
    except OSError:
        pass
    want = want or '%s/%s/bin' % (LIB, have[-1])
    if not os.access(os.path.join(want, 'postgres'), os.X_OK):
        fail('%s/postgres is not in this image, which has PostgreSQL %s only: set spec.postgresql.version to "%s"'
             % (want, ', '.join(have), have[-1]))
    return want


def prepare(config):
    """What launch.sh does as root: the data directory, a self-signed certificate, all owned by postgres."""
    data = config['postgresql']['data_dir']
    os.makedirs(data, mode=0o700, exist_ok=True)
    os.chmod(data, 0o700)
    key = CERTS + '/server.key'
    if not os.path.exists(key):
        subprocess.run(['openssl', 'req', '-nodes', '-new', '-x509', '-subj', '/CN=spilo.example.org',
                        '-keyout', key, '-out', CERTS + '/server.crt'], check=True, capture_output=True)
        os.chmod(key, 0o600)
    if os.getuid() == 0:
        postgres = pwd.getpwnam('postgres')
        for top in (os.path.dirname(data), CERTS):
            for root, dirs, files in os.walk(top):
                for name in [root] + [os.path.join(root, n) for n in dirs + files]:
                    os.lchown(name, postgres.pw_uid, postgres.pw_gid)


def write(config):
    """postgres.yml, readable by postgres only: it holds the passwords."""
    fd = os.open(CONFIG + '.tmp', os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, 'w') as f:
        yaml.safe_dump(config, f, default_flow_style=False)
    if os.getuid() == 0:
        postgres = pwd.getpwnam('postgres')
        os.chown(CONFIG + '.tmp', postgres.pw_uid, postgres.pw_gid)
    os.rename(CONFIG + '.tmp', CONFIG)


def run_patroni(env):
    """Patroni as postgres, as PID 1 (it then reaps children), with Spilo's short list of variables:
    the passwords stay out of PostgreSQL's environment."""
    if os.getuid() == 0:
        postgres = pwd.getpwnam('postgres')
        os.setgroups([])
        os.setgid(postgres.pw_gid)
        os.setuid(postgres.pw_uid)
    keep = re.compile(r'KUBERNETES_(SERVICE|PORT|ROLE)(_|$)|(POD_IP|POD_NAMESPACE|HOSTNAME|PATH|LC_ALL|LANG)$')
    clean = {k: v for k, v in env.items() if keep.match(k)}
    clean['HOME'] = PGHOME
    os.chdir(PGHOME)
    os.execvpe('patroni', ['patroni', CONFIG], clean)


def post_init(human_role, url):
    """The roles of Spilo's post_init.sh (its extensions are not in Debian's packages): the operator
    makes the users of a manifest members of admin, and never touches these protected roles."""
    import psycopg2
    from psycopg2 import sql
    with psycopg2.connect(url) as conn, conn.cursor() as cur:
        cur.execute('CREATE ROLE admin CREATEDB; CREATE ROLE cron_admin; GRANT cron_admin TO admin; CREATE ROLE robot_zmon')
        if human_role:
            cur.execute(sql.SQL('CREATE ROLE {}').format(sql.Identifier(human_role)))


def main(args):
    if args[:1] == ['post-init'] and len(args) == 3:
        return post_init(args[1], args[2])
    if args not in ([], ['configure']):
        fail('usage: entrypoint.py [configure] | post-init HUMAN_ROLE URL')
    env = dict(os.environ)
    config = configuration(env)
    prepare(config)
    write(config)
    print('spilo entrypoint: wrote %s (scope %s, data %s)' % (CONFIG, config['scope'], config['postgresql']['data_dir']),
          flush=True)
    if not args:
        run_patroni(env)


if __name__ == '__main__':
    main(sys.argv[1:])
