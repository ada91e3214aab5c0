"""RFC 6570 URI templates: expansion (the RFC's own examples) and matching a URI back.

Spec: server/resources.mdx, "Resource Templates" (templates are RFC 6570 URI
templates); RFC 6570 sections 1.2 and 3.2 for the expansion tables. Matching
is not defined by the RFC; the rules tested here are those stated in
``wiremcp.server._uri_template``'s docstring.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wiremcp.server import TemplateError, UriTemplate
from wiremcp.server._uri_template import MAX_URI_LENGTH

# RFC 6570 section 3.2's variables.
RFC_VALUES = {
    "count": ["one", "two", "three"],
    "dom": ["example", "com"],
    "dub": "me/too",
    "hello": "Hello World!",
    "half": "50%",
    "var": "value",
    "who": "fred",
    "base": "http://example.com/home/",
    "path": "/foo/bar",
    "list": ["red", "green", "blue"],
    "keys": {"semi": ";", "dot": ".", "comma": ","},
    "v": "6",
    "x": "1024",
    "y": "768",
    "empty": "",
    "empty_keys": {},
    "undef": None,
}

# (template, expansion) from RFC 6570 sections 3.2.1-3.2.9.
RFC_EXPANSIONS = [
    ("{count}", "one,two,three"),
    ("{count*}", "one,two,three"),
    ("{/count}", "/one,two,three"),
    ("{/count*}", "/one/two/three"),
    ("{;count}", ";count=one,two,three"),
    ("{;count*}", ";count=one;count=two;count=three"),
    ("{?count}", "?count=one,two,three"),
    ("{?count*}", "?count=one&count=two&count=three"),
    ("{&count*}", "&count=one&count=two&count=three"),
    # 3.2.2 simple
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{half}", "50%25"),
    ("O{empty}X", "OX"),
    ("O{undef}X", "OX"),
    ("{x,y}", "1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("?{x,empty}", "?1024,"),
    ("?{x,undef}", "?1024"),
    ("?{undef,y}", "?768"),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    # 3.2.3 reserved
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+half}", "50%25"),
    ("{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"),
    ("{+base}index", "http://example.com/home/index"),
    ("O{+empty}X", "OX"),
    ("O{+undef}X", "OX"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("up{+path}{var}/here", "up/foo/barvalue/here"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    # 3.2.4 fragment
    ("{#var}", "#value"),
    ("{#hello}", "#Hello%20World!"),
    ("{#half}", "#50%25"),
    ("foo{#empty}", "foo#"),
    ("foo{#undef}", "foo"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    # 3.2.5 label
    ("{.who}", ".fred"),
    ("{.who,who}", ".fred.fred"),
    ("{.half,who}", ".50%25.fred"),
    ("www{.dom*}", "www.example.com"),
    ("X{.var}", "X.value"),
    ("X{.empty}", "X."),
    ("X{.undef}", "X"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("X{.empty_keys}", "X"),
    ("X{.empty_keys*}", "X"),
    # 3.2.6 path segments
    ("{/who}", "/fred"),
    ("{/who,who}", "/fred/fred"),
    ("{/half,who}", "/50%25/fred"),
    ("{/who,dub}", "/fred/me%2Ftoo"),
    ("{/var}", "/value"),
    ("{/var,empty}", "/value/"),
    ("{/var,undef}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    # 3.2.7 path-style parameters
    ("{;who}", ";who=fred"),
    ("{;half}", ";half=50%25"),
    ("{;empty}", ";empty"),
    ("{;v,empty,who}", ";v=6;empty;who=fred"),
    ("{;v,bar,who}", ";v=6;who=fred"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{;x,y,undef}", ";x=1024;y=768"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    # 3.2.8 form-style query
    ("{?who}", "?who=fred"),
    ("{?half}", "?half=50%25"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("{?x,y,undef}", "?x=1024&y=768"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    # 3.2.9 form-style query continuation
    ("{&who}", "&who=fred"),
    ("{&half}", "&half=50%25"),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
]


@pytest.mark.parametrize(("template", "expected"), RFC_EXPANSIONS)
def test_expansion_matches_rfc_6570_examples(template, expected):
    """RFC 6570 section 3.2: every example expansion, levels 1-4."""
    assert UriTemplate(template).expand(RFC_VALUES) == expected


def test_expansion_of_other_scalars():
    """Numbers become their text; booleans true/false; None is undefined."""
    t = UriTemplate("test://n/{a}{?b,c}")
    assert t.expand({"a": 7, "b": True, "c": None}) == "test://n/7?b=true"
    assert t.expand({"a": 1.5}) == "test://n/1.5"


@pytest.mark.parametrize(
    ("template", "uri", "expected"),
    [
        # the conformance fixture (FIXTURES.md 2.2)
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("file:///logs/{name}", "file:///logs/app.log", {"name": "app.log"}),
        ("file:///logs/{name}", "file:///logs/hello%20world", {"name": "hello world"}),
        ("file:///logs/{name}", "file:///logs/caf%C3%A9", {"name": "café"}),
        ("file:///logs/{name}", "file:///logs/2024-01-01T10:00", {"name": "2024-01-01T10:00"}),
        ("s://{x,y}", "s://1024,768", {"x": "1024", "y": "768"}),
        ("s://{list}", "s://red,green", {"list": "red,green"}),
        ("s://{list*}", "s://red,green", {"list": ["red", "green"]}),
        ("s://{x}/{x}", "s://a/a", {"x": "a"}),
        ("s://p/{v:3}", "s://p/abc", {"v": "abc"}),
        ("s://p/{v:3}/{v}", "s://p/abc/abcdef", {"v": "abcdef"}),
        # reserved: slashes allowed; later parts win the ambiguity
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("file:///{+path}{?q}", "file:///a/b?q=1", {"path": "a/b", "q": "1"}),
        ("file:///{+path}/raw", "file:///a/b/raw", {"path": "a/b"}),
        # label, path segments
        ("s://f/{name}{.ext}", "s://f/report.pdf", {"name": "report", "ext": "pdf"}),
        ("s://f/{name}{.ext}", "s://f/report", {"name": "report"}),
        ("www{.dom*}", "www.example.com", {"dom": ["example", "com"]}),
        ("file:///x{/segs*}", "file:///x/a/b/c", {"segs": ["a", "b", "c"]}),
        ("file:///x{/a,b}", "file:///x/1", {"a": "1"}),
        ("file:///x{/a,b}", "file:///x/1/2", {"a": "1", "b": "2"}),
        # fragment
        ("s://d{#frag}", "s://d#sec/1", {"frag": "sec/1"}),
        ("s://d{#frag}", "s://d", {}),
        # named: any order, optional, repeated explode, associative explode
        ("s://q{?a,b}", "s://q?b=2&a=1", {"a": "1", "b": "2"}),
        ("s://q{?a,b}", "s://q", {}),
        ("s://q{?a,b}", "s://q?a=", {"a": ""}),
        ("s://q{?a}{&b}", "s://q?a=1&b=2", {"a": "1", "b": "2"}),
        ("s://q?fixed=1{&a}", "s://q?fixed=1&a=2", {"a": "2"}),
        ("s://q{?tag*}", "s://q?tag=x&tag=y", {"tag": ["x", "y"]}),
        ("s://q{?all*}", "s://q?x=1&y=%20", {"all": {"x": "1", "y": " "}}),
        ("s://m{;a,b}", "s://m;b=2;a", {"a": "", "b": "2"}),
        ("s://q{?a}#top", "s://q?a=1#top", {"a": "1"}),
    ],
)
def test_match(template, uri, expected):
    assert UriTemplate(template).match(uri) == expected


@pytest.mark.parametrize(
    ("template", "uri"),
    [
        ("file:///logs/{name}", "file:///logs/a/b"),  # a simple value has no '/'
        ("file:///logs/{name}", "file:///logs/"),  # nor is it empty
        ("file:///logs/{name}", "file:///logs/app.log/"),  # the whole URI must match
        ("file:///logs/{name}", "FILE:///logs/app.log"),  # literals match exactly
        ("test://template/{id}/data", "test://template/123/other"),
        ("s://{x}/{x}", "s://a/b"),  # one variable, two values
        ("s://p/{v:3}", "s://p/abcd"),  # longer than the prefix
        ("s://q{?a,b}", "s://q?c=1"),  # a parameter the template does not name
        ("s://q{?a,b}", "s://q?a=1&a=2"),  # a repeated parameter
        ("s://bad/{x}", "s://bad/%ff"),  # not UTF-8 once decoded
        ("s://q{?a}", "s://q?a=1#frag"),  # a fragment the template does not have
    ],
)
def test_no_match(template, uri):
    assert UriTemplate(template).match(uri) is None


def test_overlong_uris_match_nothing():
    t = UriTemplate("file:///{+path}")
    assert t.match("file:///" + "a" * 100) == {"path": "a" * 100}
    assert t.match("file:///" + "a" * MAX_URI_LENGTH) is None


@pytest.mark.parametrize(
    ("template", "cap"),
    [
        ("file:///logs/{name}{?lines}", MAX_URI_LENGTH),  # every value ends at a character it cannot hold
        ("test://template/{id}/data", MAX_URI_LENGTH),
        ("file:///{+path}", MAX_URI_LENGTH),  # ends with the URI
        ("www{.dom*}", MAX_URI_LENGTH),
        ("s://{#a,b}", MAX_URI_LENGTH),
        ("file:///{+path}{?q}", 3162),  # path may hold a '?': one ambiguous end
        ("s://f/{name}{.ext}", 3162),
        ("s://{+a}/{+b}/end", 310),  # two
        ("s://{+a}x{+b}y{+c}z", 104),  # three
    ],
)
def test_max_uri_length_bounds_backtracking(template, cap):
    """Hostile URIs cannot make matching expensive: ambiguous templates accept shorter URIs."""
    t = UriTemplate(template)
    assert t.max_uri_length == cap
    if cap < MAX_URI_LENGTH:
        values = {v: "v" for v in t.variables}
        short = t.expand(values)
        assert t.match(short) == values
        values[t.variables[0]] = "v" * (cap - len(short) + 2)
        assert t.match(t.expand(values)) is None  # over the cap: no match, whatever the URI


def test_variables_and_literal_templates():
    t = UriTemplate("s://{a}/{b}{?c,a}")
    assert t.variables == ("a", "b", "c")
    assert not t.is_literal
    assert UriTemplate("test://static").is_literal
    assert UriTemplate("test://static").match("test://static") == {}
    assert str(t) == "s://{a}/{b}{?c,a}" and t == UriTemplate("s://{a}/{b}{?c,a}")


@pytest.mark.parametrize(
    "template",
    ["s://{", "s://}", "s://{a", "s://{}", "s://{a{b}}", "s://{=a}", "s://{!a}", "s://{a b}", "s://{a:0}",
     "s://{a:10000}", "s://{a:x}", "s://{a:3*}", "s://{+}", "s://{a,}", "s://{-a}"],
)
def test_malformed_templates_are_refused(template):
    with pytest.raises(TemplateError):
        UriTemplate(template)


# -- expand then match gives the values back -----------------------------------------

TEXT = st.text(min_size=1, max_size=20).filter(lambda s: "\x00" not in s)
# '.' is unreserved, so a label value that contains one is ambiguous by nature.
NO_DOT = TEXT.filter(lambda s: "." not in s)


@settings(max_examples=150, deadline=None)
@given(name=TEXT, ext=NO_DOT, page=st.integers(0, 10**6), tags=st.lists(TEXT, min_size=1, max_size=4))
def test_round_trip(name, ext, page, tags):
    t = UriTemplate("file:///docs/{name}{.ext}{?page,tag*}")
    values = {"name": name, "ext": ext, "page": str(page), "tag": tags}
    uri = t.expand(values)
    assert t.match(uri) == values, uri


@settings(max_examples=100, deadline=None)
@given(path=st.lists(TEXT, min_size=1, max_size=5), x=TEXT, y=TEXT)
def test_round_trip_segments_and_lists(path, x, y):
    t = UriTemplate("s://root{/path*}/at/{x,y}")
    values = {"path": path, "x": x, "y": y}
    assert t.match(t.expand(values)) == values


@settings(max_examples=100, deadline=None)
@given(path=TEXT.filter(lambda s: "%" not in s))
def test_round_trip_reserved(path):
    """{+path} keeps reserved characters; a value with no '%' comes back whole."""
    t = UriTemplate("file:///{+path}")
    assert t.match(t.expand({"path": path})) == {"path": path}
