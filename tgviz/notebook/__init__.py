"""The notebook's widgets (anywidget): the trace browser (``widget``) and the comparison (``compare_widget``). Each holds
its trace and answers its frontend's requests with tgviz.views's messages, in tgviz.work's background workers.

Must not: build a message or a picture itself (tgviz.views does), or capture anything (the magic and the API do).
"""
