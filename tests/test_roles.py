"""File roles from each ecosystem's conventions (discover.roles)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from codeseam.discover.roles import file_role
from codeseam.records import ROLES

CASES = [
    # source, in every layout
    ("src/flask/app.py", "source"), ("lib/runner.js", "source"), ("lib/test.js", "source"),
    ("lib/reporters/spec.js", "source"), ("pkg/server/handler.go", "source"), ("src/build/app/mod.rs", "source"),
    ("crates/core/src/lib.rs", "source"), ("internal/testing.go", "source"), ("src/flask/testing.py", "source"),
    ("http/test_round_tripper.go", "source"), ("index.js", "source"), ("main.go", "source"),
    ("src/main/java/com/acme/App.java", "source"), ("app/models/user.rb", "source"),
    ("src/pkg/schema.json", "source"), ("mock/mock.go", "source"),
    # a test-like name inside a library folder, in an ecosystem whose tests live in test/ or spec/
    ("lib/bats-core/test_functions.bash", "source"), ("src/unity/test_runner.c", "source"),
    ("lib/rack/mock_test.rb", "source"), ("src/core/test_util.cc", "source"),
    # GoogleTest's suffix names are tests wherever they sit, library folders included
    ("absl/strings/internal/str_format/arg_test.cc", "test"), ("src/google/protobuf/arena_unittest.cc", "test"),
    ("include/fmt/format_test.h", "test"), ("src/lib/parser_test.c", "test"), ("absl/strings/str_cat.cc", "source"),
    ("src/core/attest.cc", "source"), ("src/latest.cpp", "source"),
    # .NET test projects: every file of one is test code, not only the *Test.cs ones
    ("src/MessagePack.Tests/Resolvers/Person.cs", "test"), ("Src/Newtonsoft.Json.UnitTests/TestObjects/Movie.cs", "test"),
    ("tests/Foo.IntegrationTests/Helpers.cs", "test"), ("src/Bar.Specs/Steps.cs", "test"),
    ("src/MessagePack/Formatters/Contest.cs", "source"), ("src/Latest.Api/Client.cs", "source"),
    # Gradle/Maven source sets: src/test and camelCase src/fooTest hold tests; src/main never does,
    # whatever a file's name (JUnit's own API, a testing library's helpers); a package whose name
    # ends in "test" is not a source set (pytest's src/_pytest/)
    ("src/commonTest/kotlin/FlowTest.kt", "test"), ("core/src/jvmTest/kotlin/Helpers.kt", "test"),
    ("src/integrationTest/java/Db.java", "test"), ("src/testFixtures/java/Data.java", "test"),
    ("junit-jupiter-api/src/main/java/org/junit/jupiter/api/TestFactory.java", "source"),
    ("src/main/java/org/assertj/core/api/TestAssertions.java", "source"), ("src/main/kotlin/FooTest.kt", "source"),
    ("src/_pytest/python.py", "source"), ("src/_pytest/fixtures.py", "source"), ("src/latest/news.py", "source"),
    # tests: folders and names, per language
    ("tests/test_app.py", "test"), ("test_utils.py", "test"), ("pkg/util_test.go", "test"),
    ("src/parse/tests.rs", "test"), ("tests/builder/help.rs", "test"), ("conftest.py", "test"),
    ("src/__tests__/button.tsx", "test"), ("src/button.test.tsx", "test"), ("lib/foo.spec.js", "test"),
    ("src/test/java/com/acme/AppTest.java", "test"), ("spec/models/user_spec.rb", "test"),
    ("app/FooTests.cs", "test"), ("e2e/login.ts", "test"), ("t/basic.t", "test"),
    ("src/androidTest/java/Foo.kt", "test"), ("test/unit/runner.spec.js", "test"),
    ("examples/tutorial/tests/test_auth.py", "test"), ("test/test_helper.bash", "test"),
    ("test_install.sh", "test"), ("test/install.bats", "test"), ("test/fixtures/plugin.bats", "fixture"), ("src/pkg/util_test.go", "test"), ("lib/x/y_spec.rb", "test"),
    # fixtures and test data
    ("tests/fixtures/config.json", "fixture"), ("pkg/parse/testdata/input.go", "fixture"),
    ("src/__snapshots__/button.test.tsx.snap", "fixture"), ("tests/ui/error.stderr", "fixture"),
    ("test/data/sample.txt", "fixture"), ("tests/static/index.html", "fixture"),
    # docs
    ("README.md", "docs"), ("docs/api.rst", "docs"), ("docs/conf.py", "docs"), ("LICENSE", "docs"),
    ("CONTRIBUTING.md", "docs"), ("doc/guide/intro.adoc", "docs"), ("man/tool.1", "docs"),
    ("docs/tutorial/setup.rst", "docs"), ("documentation/1-api.md", "docs"),
    # changelogs
    ("CHANGELOG.md", "changelog"), ("CHANGES.rst", "changelog"), ("HISTORY.md", "changelog"),
    ("NEWS", "changelog"), ("RELEASE_NOTES.md", "changelog"), ("changelog.d/123.bugfix.md", "changelog"),
    ("docs/whatsnew/3.12.rst", "changelog"), (".changeset/brave-cats.md", "changelog"),
    # examples, benchmarks
    ("examples/git.rs", "example"), ("example/app.js", "example"), ("_examples/basic/main.go", "example"),
    ("samples/hello/Program.cs", "example"), ("benches/parse.rs", "benchmark"),
    ("benchmark/index.ts", "benchmark"), ("bench/bench_search.py", "benchmark"),
    ("pkg/json/encode_bench.go", "benchmark"),
    # build and config
    ("Makefile", "build"), ("Cargo.toml", "build"), ("go.mod", "build"), ("setup.py", "build"),
    ("package.json", "build"), ("CMakeLists.txt", "build"), ("Dockerfile", "build"), ("build.rs", "build"),
    ("requirements.txt", "build"), ("requirements/dev.txt", "build"), ("scripts/release.sh", "build"),
    ("docs/Makefile", "build"), ("require/requirements.go", "source"),
    (".github/workflows/ci.yml", "config"), (".eslintrc.yml", "config"), ("tsconfig.json", "config"),
    ("tox.ini", "config"), (".gitignore", "config"), (".wallaby.js", "config"), ("codecov.yml", "config"),
    # v6: a .dist/.sample copy has its file's role; NEON is data; other ecosystems' package specs;
    # a tool's <tool>.config.<ext> is the tool's file, an application's own config module is source
    ("phpunit.xml.dist", "config"), ("phpstan.neon.dist", "config"), ("phpstan-baseline.neon", "config"),
    (".env.sample", "config"), ("README.md.dist", "docs"), ("src/foo.dist", "source"), ("x.sample", "source"),
    ("faraday.gemspec", "build"), ("Alamofire.podspec", "build"), ("src/Lib/Lib.csproj", "build"),
    ("xmonad.cabal", "build"), ("pubspec.yaml", "build"), ("build.zig", "build"), ("gradlew", "build"),
    ("Pipfile", "build"),
    ("vitest.config.ts", "build"), ("packages/vitest/vitest.config.ts", "build"),
    ("webpack.config.prod.js", "build"), ("jest.config.base.json", "build"), ("eslint.config.mjs", "config"),
    ("test/vitest.config.ts", "test"), ("src/app/app.config.ts", "source"), ("src/config.ts", "source"),
    # v7: Xcode projects, fastlane, Carthage and CocoaPods files, build scripts are build files
    ("Kingfisher.xcodeproj/project.pbxproj", "build"), ("App.xcodeproj/xcshareddata/xcschemes/App.xcscheme", "build"),
    ("App.xcworkspace/contents.xcworkspacedata", "build"), ("Configs/Base.xcconfig", "build"),
    ("App.xcodeproj/project.xcworkspace/xcshareddata/IDEWorkspaceChecks.plist", "build"),
    ("fastlane/Fastfile", "build"), ("Cartfile", "build"), ("Podfile.lock", "build"), ("Build.ps1", "build"),
    ("build.sh", "build"), ("build.cake", "build"), ("_appveyor/install.ps1", "build"),
    ("Sources/App/AppDelegate.swift", "source"), ("src/builder.sh", "source"),
    # generated and vendored
    ("vendor/github.com/pkg/errors/errors.go", "generated"), ("node_modules/lodash/index.js", "generated"),
    ("api/service_pb2.py", "generated"), ("api/service.pb.go", "generated"),
    ("third_party/zlib/inflate.c", "generated"), ("lib/models.g.dart", "generated"),
    # translation tables: a folder of them, gettext and XLIFF catalogues; a test of one is a test
    ("packages/zod/src/v4/locales/en.ts", "locale"), ("src/locale/fr.js", "locale"),
    ("app/config/locales/en.yml", "locale"), ("src/i18n/messages_de.json", "locale"), ("po/de.po", "locale"),
    ("web/translations/app.fr.xlf", "locale"), ("packages/zod/src/v4/core/tests/locales/he.test.ts", "test"),
    ("docs/i18n/fr/index.md", "docs"), ("src/localize.py", "source"),
]


@pytest.mark.parametrize("path,role", CASES)
def test_role_by_convention(path: str, role: str) -> None:
    assert file_role(path) == role


@pytest.mark.parametrize("head", [
    "// Code generated by protoc-gen-go. DO NOT EDIT.\npackage api\n",
    "/*\n* CODE GENERATED AUTOMATICALLY WITH github.com/acme/gen\n* THIS FILE MUST NOT BE EDITED BY HAND\n */\n",
    "# @generated by tool X\n",
    "// This file was automatically generated from schema.json\n",
])
def test_generated_marker_in_the_head(head: str) -> None:
    assert file_role("pkg/api/client.go", head) == "generated"
    assert file_role("pkg/api/notes.md", head) == "docs"  # prose that quotes a marker is not code


def test_kotlin_api_dump_is_generated() -> None:
    dump = "public final class okhttp3/Address {\n\tpublic final fun -deprecated_dns ()Lokhttp3/Dns;\n"
    assert file_role("okhttp/api/okhttp.api", dump) == "generated"
    assert file_role("okhttp/api/okhttp.api", "public abstract interface class okhttp3/Authenticator {\n") == "generated"
    # go-zero's .api files are the source its code is generated from
    assert file_role("service/user/api/user.api", 'syntax = "v1"\n\ntype LoginReq {\n') == "source"
    assert file_role("okhttp/api/okhttp.api") == "source"  # without the head nothing says so


@pytest.mark.parametrize("head", [
    "package api\n\n// NewClient returns a client whose ids are auto generated on first use.\n",
    '"""Helpers that regenerate the cache."""\n',
    "// The generated code is compared against the golden file; do not edit by hand the expectations.\n",
])
def test_no_marker_no_generated(head: str) -> None:
    assert file_role("pkg/api/client.go", head) == "source"


@given(st.lists(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_.-ABC019", min_size=1, max_size=12),
                min_size=1, max_size=6), st.text(max_size=200))
def test_every_path_has_one_known_role(parts: list[str], head: str) -> None:
    path = "/".join(p for p in parts if p not in (".", ".."))
    if path:
        assert file_role(path, head) in ROLES
