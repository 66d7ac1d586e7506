"""Answer rendering: Markdown and highlighted code come out as HTML; nothing a model writes can run in a page."""

from lab.markdown import render_markdown


def test_markdown_and_fenced_code_are_rendered_with_highlighting():
    html = render_markdown("**bold** and `code`\n\n```python\ndef f():\n    return 1\n```\n")
    assert "<strong>bold</strong>" in html
    assert '<div class="highlight">' in html
    assert '<span class="k">def</span>' in html


def test_raw_html_in_an_answer_is_shown_as_text_not_parsed():
    html = render_markdown('Use <script>alert(1)</script> or <img src=x onerror="alert(1)">')
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_javascript_links_lose_their_target_and_images_are_dropped():
    html = render_markdown("[click](javascript:alert(1)) ![pixel](https://tracker.example/p.png?secret=1)")
    assert "javascript:" not in html
    assert "tracker.example" not in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_ordinary_links_are_kept():
    assert 'href="https://example.com"' in render_markdown("[docs](https://example.com)")
