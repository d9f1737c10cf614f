// A Java-like grammar for ANTLR 3 (Debian package antlr3): the input of the
// "antlr3" application in tests/integration/test_agent_count.sh and of its
// row in agent/bench.sh (make bench-agent), issue 9.  ANTLR's grammar
// analysis (NFA to DFA, backtracking predicates, memoization) and its code
// generation (StringTemplate 4) allocate about 0.8 M objects on it in ~1.5 s
// of CPU, single-threaded.  The output (MiniLangParser.java, ...) goes to
// a temporary directory.
grammar MiniLang;
options { output = AST; backtrack = true; memoize = true; }
tokens { BLOCK; CALL; INDEX; NEG; }

program     : (declaration)* EOF ;
declaration : functionDecl | classDecl | varDecl ;
classDecl   : 'class' ID ('extends' qualified)? ('implements' qualified (',' qualified)*)? '{' member* '}' ;
member      : modifier* (functionDecl | varDecl | classDecl) ;
modifier    : 'public' | 'private' | 'protected' | 'static' | 'final' | 'abstract' ;
functionDecl: type ID '(' params? ')' (block | ';') ;
params      : param (',' param)* ;
param       : 'final'? type ID ;
varDecl     : type varInit (',' varInit)* ';' ;
varInit     : ID ('[' ']')* ('=' initializer)? ;
initializer : expr | '{' (initializer (',' initializer)*)? '}' ;
type        : (qualified | primitive) typeArgs? ('[' ']')* ;
typeArgs    : '<' type (',' type)* '>' ;
primitive   : 'int' | 'long' | 'double' | 'boolean' | 'char' | 'void' ;
qualified   : ID ('.' ID)* ;
block       : '{' statement* '}' ;
statement
    : block
    | 'if' '(' expr ')' statement (options {greedy=true;} : 'else' statement)?
    | 'while' '(' expr ')' statement
    | 'do' statement 'while' '(' expr ')' ';'
    | 'for' '(' forInit? ';' expr? ';' exprList? ')' statement
    | 'for' '(' type ID ':' expr ')' statement
    | 'switch' '(' expr ')' '{' switchCase* '}'
    | 'try' block catchClause* ('finally' block)?
    | 'return' expr? ';'
    | 'throw' expr ';'
    | 'break' ID? ';'
    | 'continue' ID? ';'
    | (type ID) => varDecl
    | ID ':' statement
    | expr ';'
    | ';'
    ;
catchClause : 'catch' '(' type ID ')' block ;
switchCase  : ('case' expr ':' | 'default' ':') statement* ;
forInit     : (type ID) => type varInit (',' varInit)* | exprList ;
exprList    : expr (',' expr)* ;
expr        : condExpr (assignOp expr)? ;
assignOp    : '=' | '+=' | '-=' | '*=' | '/=' | '%=' | '&=' | '|=' | '^=' | '<<=' | '>>=' ;
condExpr    : orExpr ('?' expr ':' condExpr)? ;
orExpr      : andExpr ('||' andExpr)* ;
andExpr     : bitOrExpr ('&&' bitOrExpr)* ;
bitOrExpr   : xorExpr ('|' xorExpr)* ;
xorExpr     : bitAndExpr ('^' bitAndExpr)* ;
bitAndExpr  : eqExpr ('&' eqExpr)* ;
eqExpr      : relExpr (('==' | '!=') relExpr)* ;
relExpr     : shiftExpr (('<' | '>' | '<=' | '>=') shiftExpr | 'instanceof' type)* ;
shiftExpr   : addExpr (('<<' | '>>' | '>>>') addExpr)* ;
addExpr     : mulExpr (('+' | '-') mulExpr)* ;
mulExpr     : unary (('*' | '/' | '%') unary)* ;
unary
    : '-' unary
    | '!' unary
    | '~' unary
    | '++' unary
    | '--' unary
    | ('(' primitive) => '(' type ')' unary
    | ('(' qualified ')' (ID | '(')) => '(' type ')' unary
    | postfix
    ;
postfix     : primary (selector)* (options {greedy=true;} : '++' | '--')? ;
selector
    : '.' ID arguments?
    | '[' expr ']'
    ;
arguments   : '(' exprList? ')' ;
primary
    : '(' expr ')'
    | 'this' | 'super' '.' ID
    | 'new' creator
    | literal
    | ID arguments?
    ;
creator     : type (arguments classBody? | ('[' expr ']')+ ('[' ']')* | ('[' ']')+ initializer) ;
classBody   : '{' member* '}' ;
literal     : INT | FLOAT | STRING | CHAR | 'true' | 'false' | 'null' ;

ID      : ('a'..'z' | 'A'..'Z' | '_' | '$') ('a'..'z' | 'A'..'Z' | '_' | '$' | '0'..'9')* ;
INT     : ('0'..'9')+ ('L' | 'l')? | '0' ('x' | 'X') HEX+ ;
FLOAT   : ('0'..'9')+ '.' ('0'..'9')* EXP? ('d' | 'f')? | '.' ('0'..'9')+ EXP? ;
fragment EXP : ('e' | 'E') ('+' | '-')? ('0'..'9')+ ;
fragment HEX : '0'..'9' | 'a'..'f' | 'A'..'F' ;
STRING  : '"' (ESC | ~('\\' | '"'))* '"' ;
CHAR    : '\'' (ESC | ~('\\' | '\'')) '\'' ;
fragment ESC : '\\' ('n' | 't' | 'r' | '\\' | '"' | '\'' | 'u' HEX HEX HEX HEX) ;
WS      : (' ' | '\t' | '\r' | '\n')+ { $channel = HIDDEN; } ;
COMMENT : '/*' (options {greedy=false;} : .)* '*/' { $channel = HIDDEN; } ;
LINE_COMMENT : '//' ~('\n' | '\r')* ('\r'? '\n')? { $channel = HIDDEN; } ;
