"""Safe and unsafe word lists: open sources, licensed loaders, the compiled artifact."""
