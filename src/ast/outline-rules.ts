// Which tree-sitter nodes are declarations, per language: data read by outline.ts. A rule names the
// outline kind, how to find the name, and which child containers hold members (class bodies, impl
// blocks); `through` kinds are wrappers walked into without an entry of their own.
import type { SgNode } from "@ast-grep/napi";

export interface DeclRule {
  kind: string | ((n: SgNode) => string);
  /** The kind used inside a container (a function in a class is a method). */
  nested?: string;
  name?: (n: SgNode) => string | undefined;
  /** Child kinds that hold members, walked one level deeper. */
  members?: string[];
  /** For declarations that declare several names (`const a = 1, b = 2`): the child kinds that each get an entry. */
  each?: string[];
}

export interface OutlineRules {
  decls: Record<string, DeclRule>;
  /** Wrappers walked into transparently. */
  through: string[];
  /** Wrappers whose text starts the signature (`export`, `declare`), unlike decorators. */
  prefix: string[];
}

const fn = (n: SgNode) =>
  ["arrow_function", "function_expression", "function", "generator_function"].includes(
    n.field("value")?.kind() as string,
  );
const keyword = (n: SgNode) =>
  n.parent()?.kind() === "variable_declaration" ? "var" : (n.parent()?.children()[0]?.text() ?? "const");

const JS_LIKE: OutlineRules = {
  decls: {
    function_declaration: { kind: "function" },
    generator_function_declaration: { kind: "function" },
    function_signature: { kind: "function" },
    class_declaration: { kind: "class", members: ["class_body"] },
    abstract_class_declaration: { kind: "class", members: ["class_body"] },
    class: { kind: "class", members: ["class_body"] },
    interface_declaration: { kind: "interface" },
    type_alias_declaration: { kind: "type" },
    enum_declaration: { kind: "enum" },
    internal_module: { kind: "namespace", members: ["statement_block"] },
    module: { kind: "module", members: ["statement_block"] },
    lexical_declaration: { kind: "variable", each: ["variable_declarator"] },
    variable_declaration: { kind: "variable", each: ["variable_declarator"] },
    variable_declarator: { kind: (n) => (fn(n) ? "function" : keyword(n)) },
    method_definition: { kind: "method" },
    abstract_method_signature: { kind: "method" },
    method_signature: { kind: "method" },
    public_field_definition: { kind: "field" },
    field_definition: { kind: "field", name: (n) => n.field("property")?.text() },
  },
  through: ["export_statement", "ambient_declaration", "expression_statement"],
  prefix: ["export_statement", "ambient_declaration"],
};

const PYTHON: OutlineRules = {
  decls: {
    function_definition: { kind: "function", nested: "method", members: [] },
    class_definition: { kind: "class", members: ["block"] },
    assignment: {
      kind: "variable",
      nested: "attribute",
      name: (n) => (n.field("left")?.kind() === "identifier" ? n.field("left")!.text() : undefined),
    },
  },
  through: ["decorated_definition", "expression_statement"],
  prefix: [],
};

const GO: OutlineRules = {
  decls: {
    function_declaration: { kind: "function" },
    method_declaration: { kind: "method" },
    type_declaration: { kind: "type", each: ["type_spec", "type_alias"] },
    type_spec: {
      kind: (n) =>
        ({ struct_type: "struct", interface_type: "interface" })[n.field("type")?.kind() as string] ?? "type",
    },
    type_alias: { kind: "type" },
    const_declaration: { kind: "const", each: ["const_spec"] },
    const_spec: { kind: "const" },
    var_declaration: { kind: "var", each: ["var_spec", "var_spec_list"] },
    var_spec: { kind: "var" },
  },
  through: [],
  prefix: [],
};

const RUST: OutlineRules = {
  decls: {
    function_item: { kind: "function", nested: "method" },
    function_signature_item: { kind: "function", nested: "method" },
    struct_item: { kind: "struct" },
    enum_item: { kind: "enum" },
    union_item: { kind: "union" },
    trait_item: { kind: "trait", members: ["declaration_list"] },
    impl_item: {
      kind: "impl",
      name: (n) =>
        n.field("trait") ? `${n.field("trait")!.text()} for ${n.field("type")?.text()}` : n.field("type")?.text(),
      members: ["declaration_list"],
    },
    mod_item: { kind: "module", members: ["declaration_list"] },
    const_item: { kind: "const" },
    static_item: { kind: "static" },
    type_item: { kind: "type" },
    macro_definition: { kind: "macro" },
  },
  through: [],
  prefix: [],
};

const JAVA: OutlineRules = {
  decls: {
    class_declaration: { kind: "class", members: ["class_body"] },
    interface_declaration: { kind: "interface", members: ["interface_body"] },
    enum_declaration: { kind: "enum", members: ["enum_body"] },
    record_declaration: { kind: "record", members: ["class_body"] },
    annotation_type_declaration: { kind: "annotation" },
    method_declaration: { kind: "method" },
    constructor_declaration: { kind: "constructor" },
    field_declaration: { kind: "field", each: ["variable_declarator"] },
    constant_declaration: { kind: "constant", each: ["variable_declarator"] },
    variable_declarator: { kind: (n) => (n.parent()?.kind() === "constant_declaration" ? "constant" : "field") },
  },
  through: ["enum_body_declarations"],
  prefix: [],
};

/** C declarators nest (`*make(int)` is a pointer declarator around a function declarator): follow them to the name. */
function declarators(n: SgNode): SgNode[] {
  const chain: SgNode[] = [];
  for (let d = n.field("declarator"); d; d = d.field("declarator")) chain.push(d);
  return chain;
}
const cName = (n: SgNode) =>
  declarators(n)
    .find((d) => ["identifier", "type_identifier", "field_identifier"].includes(d.kind() as string))
    ?.text();
const cIsFunction = (n: SgNode) => declarators(n).some((d) => d.kind() === "function_declarator");

const C: OutlineRules = {
  decls: {
    function_definition: { kind: "function", name: cName },
    declaration: { kind: (n) => (cIsFunction(n) ? "prototype" : "variable"), name: cName },
    struct_specifier: { kind: "struct" },
    union_specifier: { kind: "union" },
    enum_specifier: { kind: "enum" },
    type_definition: { kind: "typedef", name: cName },
    preproc_def: { kind: "macro" },
    preproc_function_def: { kind: "macro" },
  },
  through: ["preproc_ifdef", "preproc_if", "preproc_else", "preproc_elif"],
  prefix: [],
};

export const OUTLINE_RULES: Record<string, OutlineRules> = {
  typescript: JS_LIKE,
  tsx: JS_LIKE,
  javascript: JS_LIKE,
  python: PYTHON,
  go: GO,
  rust: RUST,
  java: JAVA,
  c: C,
};
