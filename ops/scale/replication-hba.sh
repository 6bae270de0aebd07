#!/bin/sh
# Run once by the postgres image when it creates the primary's data directory: the replica's
# pg_basebackup and WAL streaming connect as a replication client, which the image's own
# "host all all all" line does not cover. Trust inside the compose network, as the rest of it.
echo "host replication all all trust" >> "$PGDATA/pg_hba.conf"
