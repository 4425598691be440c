-- The vaults a kb server serves and who may use them.
--
-- `path` is where the vault is: NULL for the vault `kb serve` is given (--kb-dir, KB_DIR),
-- a relative path under KB_DATA_DIR (`vaults/NAME` for a private vault), or an absolute
-- one. `owner` is the person whose own vault it is (their default, an editor there); a
-- removed person's vault stays, owned by no one, and its files are never touched.
-- A grant gives one person a role in one vault: `reader` or `editor`.
CREATE TABLE vaults (
    name TEXT PRIMARY KEY NOT NULL,
    path TEXT NULL,
    owner TEXT NULL REFERENCES people (name) ON DELETE SET NULL,
    sync_remote TEXT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX vaults_owner ON vaults (owner);

CREATE TABLE grants (
    vault TEXT NOT NULL REFERENCES vaults (name) ON DELETE CASCADE,
    person TEXT NOT NULL REFERENCES people (name) ON DELETE CASCADE,
    role TEXT NOT NULL CHECK (role IN ('reader', 'editor')),
    PRIMARY KEY (vault, person)
);
CREATE INDEX grants_person ON grants (person);

-- The people added before vaults existed get theirs: the first admin the served vault,
-- everyone else a private one under KB_DATA_DIR/vaults/.
INSERT INTO vaults (name, path, owner, created_at)
SELECT p.name,
       CASE WHEN p.name = (SELECT name FROM people WHERE admin = 1 ORDER BY created_at, name LIMIT 1)
            THEN NULL ELSE 'vaults/' || p.name END,
       p.name,
       p.created_at
FROM people p;
