"""The programs of the tutorials (docs/tutorials/, docs/wire.md, docs/migrate/); tests/tutorials/ runs each one."""
