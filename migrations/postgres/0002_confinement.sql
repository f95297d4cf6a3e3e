-- Confinement (docs/decisions.md#confinement): how the kernel holds a command execgate
-- runs, chosen with the verdict and shown to whoever decides (`confinement`), and what
-- the confined command reported the kernel refused it (`kernel_refused`, a JSON array
-- of its error lines; NULL when nothing was refused or nothing ran).
ALTER TABLE exec_approval ADD COLUMN confinement TEXT
    CHECK (confinement IN ('harmless', 'read-only', 'read-only+network', 'workspace',
                           'workspace+network', 'project-work', 'none'));
ALTER TABLE exec_approval ADD COLUMN kernel_refused TEXT;
