"""The design-gates MkDocs plugin: design records as reviewer pages.

Add it to a site's ``mkdocs.yml``::

    plugins:
      - search
      - design-gates

``plugin.py`` holds the plugin and its build events; the other modules each have
one role: ``options.py`` (the plugin's settings), ``record_sources.py`` (which files
are records), ``gate_results.py`` (front matter and gate results for each record),
``evidence_check.py`` (do evidence files still hash to their pins), ``record_header.py``
(the header at the top of a record page), ``indexes.py`` (the records and results
index pages), ``gate_pages.py`` (the G0-G8 pages the package ships), ``site_nav.py``
(records and gate pages in the navigation) and ``markup.py`` (escaped HTML pieces).
The stylesheet is ``assets/design-gates.css``; see ``docs/site-plugin.md``.
"""
