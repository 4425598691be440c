-- The device an operation was made on when the vault is synced (KB_DEVICE): this device
-- for a change made here, another for one a sync brought (source 'sync').
ALTER TABLE operations ADD COLUMN device TEXT NULL;
